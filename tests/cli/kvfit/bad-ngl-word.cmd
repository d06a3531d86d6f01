kvfit tests/gguf/tiny-q4_k_m.gguf --gpu rtx-4090 --n-gpu-layers most
