kvsize tests/bad/dtype-number.json
