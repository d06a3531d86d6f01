kvfit llama-3.1-8b --gpu h100-sxm --tp 2 --kv-offloading-size 128 --ctx 8k
