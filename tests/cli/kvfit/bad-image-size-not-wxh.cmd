kvfit gemma-3-27b --gpu h100-sxm --images 1 --image-size 1280
