kvfit tests/gguf/tiny-00003-of-00003.gguf tests/gguf/qwen3-30b-a3b.gguf --params
