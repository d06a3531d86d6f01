kvsize tests/bad/recurrent.json
