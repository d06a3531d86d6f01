kvsize tests/bad/nemotron-h-pattern-short.json
