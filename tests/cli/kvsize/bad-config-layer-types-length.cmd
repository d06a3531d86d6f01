kvsize tests/bad/layer-types-length.json
