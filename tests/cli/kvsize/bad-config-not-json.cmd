kvsize tests/bad/not-json.json
