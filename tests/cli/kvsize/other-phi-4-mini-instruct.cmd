kvsize tests/configs/phi-4-mini-instruct.json --ctx 8192,131072 -t auto,fp8
