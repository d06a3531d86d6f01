kvsize tests/configs/smollm-1.7b.json --ctx 8192,131072 -t auto,fp8
