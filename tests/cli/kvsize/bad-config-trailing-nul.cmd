kvsize tests/bad/trailing-nul.json
