kvsize tests/configs/gemma-3n-e4b-it.json --ctx 8192,131072 -t auto,fp8
