kvsize tests/bad/string-latin1.json
