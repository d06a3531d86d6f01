kvfit llama-3.1-8b --gpu-mem 12GB --solve tp --users 1 --engine llamacpp
