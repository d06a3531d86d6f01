kvsize tests/bad/architectures-string.json
