kvsize tests/bad/attn-config-list.json --ctx 8192
