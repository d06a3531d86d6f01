kvsize tests/configs/mistral-7b-v0.3.json --ctx 8192,131072 -t auto,fp8
