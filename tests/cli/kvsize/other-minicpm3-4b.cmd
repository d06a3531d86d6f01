kvsize tests/configs/minicpm3-4b.json --ctx 8192,131072
