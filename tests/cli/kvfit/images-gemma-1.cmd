kvfit gemma-3-27b --gpu h100-sxm --engine vllm --ctx 8k --images 1
