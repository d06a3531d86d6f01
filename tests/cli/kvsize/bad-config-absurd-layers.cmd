kvsize tests/bad/absurd-layers.json
