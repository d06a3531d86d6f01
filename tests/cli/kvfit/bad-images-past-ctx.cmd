kvfit gemma-3-27b --gpu h100-sxm --ctx 2k --images 4 --isl 1000 --osl 200
