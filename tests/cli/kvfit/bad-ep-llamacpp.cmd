kvfit mixtral-8x7b --gpu h100-sxm --tp 2 --ep 2 --engine llamacpp
