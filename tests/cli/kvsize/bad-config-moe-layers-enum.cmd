kvsize tests/bad/moe-layers-enum.json
