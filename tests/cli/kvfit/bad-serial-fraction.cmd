kvfit gpt2 --gpu h100-sxm --isl 512 --osl 64 --serial-fraction 1.5
