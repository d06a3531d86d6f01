kvsize tests/bad/gguf-split-00001-of-00003.gguf
