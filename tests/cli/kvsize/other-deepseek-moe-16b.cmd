kvsize tests/configs/deepseek-moe-16b.json --ctx 8192,131072 -t auto,fp8
