kvfit llama-3.1-8b --gpu h100-sxm --ctx 8k --tp 2 -t fp8 -o sglang; kvfit llama-3.1-8b --gpu h100-sxm --ctx 8k --kv-offload 100GB --page-size 64 -o sglang
