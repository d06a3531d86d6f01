kvsize tests/bad/no-rope-layers-string.json --ctx 8192
