kvfit llama-3.1-8b --gpu-mem 24GB --solve ctx --users 100000 --engine ideal
