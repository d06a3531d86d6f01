kvsize tests/configs/qwen3-32b.json --ctx 8192,131072 -t auto,fp8
