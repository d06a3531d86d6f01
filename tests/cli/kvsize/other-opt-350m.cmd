kvsize tests/configs/opt-350m.json --ctx 8192,131072
