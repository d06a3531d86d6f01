kvsize tests/bad/layer-types-unknown.json
