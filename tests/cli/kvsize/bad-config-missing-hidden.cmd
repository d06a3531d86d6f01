kvsize tests/bad/missing-hidden.json
