kvsize tests/bad/missing-comma.json
