kvsize tests/bad/gguf-kv-heads-float.gguf
