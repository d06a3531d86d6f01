kvsize tests/configs/jamba-1.5-mini.json --ctx 8192,131072 -t auto,fp8
