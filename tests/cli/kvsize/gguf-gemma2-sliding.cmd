kvsize tests/gguf/gemma-2-2b-it.gguf --per-layer --ctx 8k
