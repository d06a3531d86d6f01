kvsize tests/bad/kda-conv-zero.json
