kvfit llama-3.1-8b --gpu h100-sxm --kv-offload 64GiB --prefix-hit 0.5 --isl 4096 --osl 256 --users 16 --engine all
