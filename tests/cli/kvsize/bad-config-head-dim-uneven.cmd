kvsize tests/bad/head-dim-uneven.json
