kvfit qwen3-30b-a3b --gpu h100-sxm --engine trtllm --tp 4 --dp-attention --ep 4 --isl 1000 --osl 1000 --users 256 -o tsv
