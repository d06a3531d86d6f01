kvfit gemma-3-27b --gpu h100-sxm --ctx 128k -o sglang
