kvfit llama-3.1-8b --gpu-mem 12GB --solve ctx --users 1
