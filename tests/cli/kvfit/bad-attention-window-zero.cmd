kvfit gemma-3-27b --gpu h100-sxm --engine trtllm --max-attention-window 1024,0
