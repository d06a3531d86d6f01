kvfit gemma-3-27b --gpu h100-sxm --image-size 1280x720
