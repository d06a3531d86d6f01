kvsize tests/bad/gguf-duplicate-key.gguf
