kvsize tests/bad/gguf-arch-bert.gguf
