kvfit llama-3.1-8b --gpu h100-sxm --isl 8000 --osl 500 --ctx 8k
