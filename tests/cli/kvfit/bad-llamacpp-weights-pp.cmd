kvfit llama-3.1-8b --gpu-mem 12GB --engine llamacpp --ctx 8k | cut -f1,5,27
