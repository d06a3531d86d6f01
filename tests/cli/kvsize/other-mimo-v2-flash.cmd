kvsize tests/configs/mimo-v2-flash.json --ctx 8192,131072
