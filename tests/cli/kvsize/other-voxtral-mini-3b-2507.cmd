kvsize tests/configs/voxtral-mini-3b-2507.json --ctx 8192,131072 -t auto,fp8
