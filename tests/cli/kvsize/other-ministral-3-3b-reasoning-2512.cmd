kvsize tests/configs/ministral-3-3b-reasoning-2512.json --ctx 8192,131072 -t auto,fp8
