kvfit llama-3.1-8b --gpu h100-sxm --isl 1000 --osl 200 --max-tpot 9 --cost-per-hour 3 -o json
