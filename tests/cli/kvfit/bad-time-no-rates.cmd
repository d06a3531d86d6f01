kvfit llama-3.1-8b --gpu-mem 80GB --isl 100 --osl 10
