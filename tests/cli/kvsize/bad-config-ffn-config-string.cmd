kvsize tests/bad/ffn-config-string.json --ctx 8192
