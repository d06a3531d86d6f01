kvfit llama-3.1-8b --gpu h100-sxm --isl 100 --osl 10 --bw-efficiency 1.5
