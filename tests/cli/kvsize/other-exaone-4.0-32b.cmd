kvsize tests/configs/exaone-4.0-32b.json --ctx 8192,131072 -t auto,fp8
