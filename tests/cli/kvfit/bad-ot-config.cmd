kvfit qwen3-30b-a3b --engine llamacpp --gpu rtx-4090 -ot attn=CPU
