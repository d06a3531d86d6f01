kvsize tests/bad/kv-not-dividing.json
