kvsize - < tests/bad
