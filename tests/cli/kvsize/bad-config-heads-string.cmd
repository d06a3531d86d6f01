kvsize tests/bad/heads-string.json
