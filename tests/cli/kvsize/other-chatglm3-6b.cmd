kvsize tests/configs/chatglm3-6b.json --ctx 8192,131072 -t auto,fp8
