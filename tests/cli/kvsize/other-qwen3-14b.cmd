kvsize tests/configs/qwen3-14b.json --ctx 8192,131072 -t auto,fp8
