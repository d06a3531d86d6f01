kvsize tests/bad/gguf-unknown-type.gguf
