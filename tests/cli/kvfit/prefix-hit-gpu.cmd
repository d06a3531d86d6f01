kvfit llama-3.1-8b --gpu h100-sxm --prefix-hit 0.9 --isl 8192 --osl 128 --users 8
