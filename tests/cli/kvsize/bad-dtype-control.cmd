kvsize tests/bad/dtype-control.json
