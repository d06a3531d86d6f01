kvfit llama-3.1-8b --gpu h100-sxm --prefix-hit 1.5 --isl 100 --osl 10
