kvsize tests/bad/nested-missing-layers.json
