kvsize tests/configs/minicpm-2b-128k.json --ctx 8192,131072 -t auto,fp8
