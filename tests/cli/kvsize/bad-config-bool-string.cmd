kvsize tests/bad/bool-string.json
