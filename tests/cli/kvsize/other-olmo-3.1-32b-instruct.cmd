kvsize tests/configs/olmo-3.1-32b-instruct.json --ctx 8192,131072 -t auto,fp8
