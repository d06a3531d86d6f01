kvsize tests/configs/kimi-linear-48b-a3b.json --ctx 8192,131072 -t auto,fp8
