kvfit gemma-2-9b --gpu h100-sxm --kv-offload 16GiB
