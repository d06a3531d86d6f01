kvsize tests/configs/qwen3-next-80b-a3b-instruct.json --ctx 8192,131072 -t auto,fp8
