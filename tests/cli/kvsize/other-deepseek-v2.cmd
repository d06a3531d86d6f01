kvsize tests/configs/deepseek-v2.json --ctx 8192,131072 -t auto,fp8
