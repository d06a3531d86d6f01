kvfit llama-3.1-8b --gpu h100-sxm --kv-offload 64GiB --hicache-size 64
