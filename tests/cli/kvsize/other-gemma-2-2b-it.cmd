kvsize tests/configs/gemma-2-2b-it.json --ctx 8192,131072 -t auto,fp8
