kvsize tests/bad/encoder-decoder.json
