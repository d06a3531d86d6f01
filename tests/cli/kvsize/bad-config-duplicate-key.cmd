kvsize tests/bad/duplicate-key.json
