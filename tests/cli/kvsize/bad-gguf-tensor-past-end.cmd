kvsize tests/bad/gguf-tensor-past-end.gguf
