kvsize tests/bad/gguf-string-past-end.gguf
