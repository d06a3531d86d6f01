kvfit gemma-3-27b --gpu h100-sxm --max-attention-window 1024,131072 --ctx 32k
