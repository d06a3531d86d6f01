kvfit llama-3.1-8b --gpu-mem 24GB --reserve 32GB
