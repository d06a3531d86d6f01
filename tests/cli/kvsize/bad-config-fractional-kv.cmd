kvsize tests/bad/fractional-kv.json
