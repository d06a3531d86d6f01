kvsize tests/bad/array.json
