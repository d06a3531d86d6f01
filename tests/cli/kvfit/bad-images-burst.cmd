kvfit gemma-3-27b --gpu h100-sxm --ctx 8k --images 1 --isl 1000 --osl 200 --arrivals burst
