kvsize tests/bad/missing-layers.json
