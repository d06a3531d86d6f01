kvfit --engine ideal llama-3.1-8b --gpu-mem 80GB --weights 16GB --reserve 6GB --ctx 8192 --users 48 --bandwidth 3350
