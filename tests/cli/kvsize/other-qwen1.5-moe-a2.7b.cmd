kvsize tests/configs/qwen1.5-moe-a2.7b.json --ctx 8192,131072 -t auto,fp8
