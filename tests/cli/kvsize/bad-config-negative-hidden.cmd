kvsize tests/bad/negative-hidden.json
