kvsize tests/bad
