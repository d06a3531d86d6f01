kvsize tests/configs/starcoder2-15b.json --ctx 8192,131072 -t auto,fp8
