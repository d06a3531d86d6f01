kvsize tests/bad/gguf-nested-array.gguf
