kvsize tests/configs/gemma-2-27b.json --ctx 8192,131072 -t auto,fp8
