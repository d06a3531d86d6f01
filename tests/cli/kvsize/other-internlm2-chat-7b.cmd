kvsize tests/configs/internlm2-chat-7b.json --ctx 8192,131072 -t auto,fp8
