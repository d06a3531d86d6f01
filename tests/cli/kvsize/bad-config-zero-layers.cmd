kvsize tests/bad/zero-layers.json
