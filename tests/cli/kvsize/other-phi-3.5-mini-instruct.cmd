kvsize tests/configs/phi-3.5-mini-instruct.json --ctx 8192,131072 -t auto,fp8
