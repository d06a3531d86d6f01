kvsize tests/configs/mamba-2.8b.json --ctx 8192,131072 -t auto,fp8
