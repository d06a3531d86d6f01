kvfit llama-3.1-8b --gpu h100-sxm --tp 2 --isl 1000 --osl 200 --allreduce-latency -1
