kvsize tests/configs/qwen3.5-9b.json --ctx 8192,131072 -t auto,fp8
