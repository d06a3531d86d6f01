kvsize tests/bad/trailing-data.json
