kvsize tests/bad/string-control.json
