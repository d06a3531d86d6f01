kvsize tests/gguf/qwen3-30b-a3b.gguf --ctx 32k
