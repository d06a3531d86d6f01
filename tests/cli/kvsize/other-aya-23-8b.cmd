kvsize tests/configs/aya-23-8b.json --ctx 8192,131072 -t auto,fp8
