kvsize tests/bad/zero-head-dim.json
