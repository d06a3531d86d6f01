kvfit gemma-3-27b --gpu h100-sxm --images two
