kvsize tests/configs/gpt-oss-120b.json --ctx 8192,131072 -t auto,fp8
