kvfit llama-3.1-8b --gpu h100-sxm -e trtllm --isl 10000 --osl 100 -u 4
