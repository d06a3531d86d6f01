kvfit gemma-3-27b --gpu h100-sxm --engine sglang --images 1
