kvfit qwen3-30b-a3b --gpu h100-sxm --engine sglang --tp 4 --dp-attention --ep 4 --min-users 5000 -o tsv
