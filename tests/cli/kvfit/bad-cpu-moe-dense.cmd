kvfit llama-3.1-8b --engine llamacpp --gpu rtx-4090 --cpu-moe
