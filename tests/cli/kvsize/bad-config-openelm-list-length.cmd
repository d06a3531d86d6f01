kvsize tests/bad/openelm-list-length.json
