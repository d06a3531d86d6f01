kvsize tests/bad/gguf-truncated.gguf
