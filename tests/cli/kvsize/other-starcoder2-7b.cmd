kvsize tests/configs/starcoder2-7b.json --ctx 8192,131072 -t auto,fp8
