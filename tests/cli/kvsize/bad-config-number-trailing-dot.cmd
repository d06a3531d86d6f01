kvsize tests/bad/number-trailing-dot.json
