kvsize tests/configs/recurrentgemma-2b.json --ctx 8192,131072 -t auto,fp8
