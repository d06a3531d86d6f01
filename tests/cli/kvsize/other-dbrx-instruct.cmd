kvsize tests/configs/dbrx-instruct.json --ctx 8192,131072 -t auto,fp8
