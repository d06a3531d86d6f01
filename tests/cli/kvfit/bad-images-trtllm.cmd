kvfit gemma-3-27b --gpu h100-sxm --engine trtllm --images 1
