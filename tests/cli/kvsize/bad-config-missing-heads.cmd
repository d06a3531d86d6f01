kvsize tests/bad/missing-heads.json
