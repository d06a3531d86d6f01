kvsize tests/configs/devstral-small-2-24b-instruct.json --ctx 8192,131072 -t auto,fp8
