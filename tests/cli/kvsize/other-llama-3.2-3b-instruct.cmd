kvsize tests/configs/llama-3.2-3b-instruct.json --ctx 8192,131072 -t auto,fp8
