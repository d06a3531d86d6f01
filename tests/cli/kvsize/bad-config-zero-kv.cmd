kvsize tests/bad/zero-kv.json
