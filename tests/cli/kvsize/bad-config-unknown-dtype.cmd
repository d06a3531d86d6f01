kvsize tests/bad/unknown-dtype.json
