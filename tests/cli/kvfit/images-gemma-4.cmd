kvfit gemma-3-27b --gpu h100-sxm --engine vllm --ctx 8k --images 4 --max-num-seqs 8 --isl 1000 --osl 200
