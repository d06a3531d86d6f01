kvfit llama-3.1-8b --gpu h100-sxm --isl 1000 --osl 200 --users 1,64,512 --max-tpot 12
