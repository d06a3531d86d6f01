kvsize tests/bad/string-bad-unicode.json
