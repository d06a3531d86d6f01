kvsize tests/bad/truncated.json
