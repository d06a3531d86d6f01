kvfit llama-3.1-8b --gpu h100-sxm --engine trtllm --host_cache_size 68719476736 --ctx 8k
