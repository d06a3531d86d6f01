kvsize tests/bad/empty.json
