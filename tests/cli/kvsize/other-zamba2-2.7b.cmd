kvsize tests/configs/zamba2-2.7b.json --ctx 8192,131072 -t auto,fp8
