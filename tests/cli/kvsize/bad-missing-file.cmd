kvsize tests/bad/no-such-file.json
