kvfit llama-3.1-8b --gpu h100-sxm --engine llamacpp --kv-offload 64GiB
