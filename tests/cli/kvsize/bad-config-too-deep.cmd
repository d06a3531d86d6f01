kvsize tests/bad/too-deep.json
