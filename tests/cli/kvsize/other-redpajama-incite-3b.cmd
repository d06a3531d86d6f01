kvsize tests/configs/redpajama-incite-3b.json --ctx 8192,131072 -t auto,fp8
