kvsize tests/gguf/tiny-q4_k_m.gguf --ctx 4k | kvfit - --gpu rtx-4090
