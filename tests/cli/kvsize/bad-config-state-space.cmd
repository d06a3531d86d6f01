kvsize tests/bad/state-space.json
