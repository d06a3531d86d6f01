kvsize tests/bad/jamba-offset.json
