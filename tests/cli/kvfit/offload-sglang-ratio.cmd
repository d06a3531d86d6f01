kvfit llama-3.1-8b --gpu h100-sxm --engine sglang --hicache-ratio 2 --ctx 8k
