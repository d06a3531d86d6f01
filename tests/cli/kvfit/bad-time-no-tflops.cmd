kvfit llama-3.1-8b --gpu-mem 80GB --bandwidth 3350 --isl 100 --osl 10
