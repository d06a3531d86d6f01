kvfit tests/gguf/tiny-q4_k_m.gguf --params
