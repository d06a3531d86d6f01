kvsize tests/bad/number-leading-zero.json
