kvsize tests/bad/linear-attn-config-number.json --ctx 8192
