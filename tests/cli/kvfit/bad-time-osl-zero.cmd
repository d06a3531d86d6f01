kvfit llama-3.1-8b --gpu h100-sxm --isl 10 --osl 0
