kvsize tests/bad/all-kv-shared.json
