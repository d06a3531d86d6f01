kvsize tests/configs/qwen-7b.json --ctx 8192,131072
