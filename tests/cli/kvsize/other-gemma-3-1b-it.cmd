kvsize tests/configs/gemma-3-1b-it.json --ctx 8192,131072 -t auto,fp8
