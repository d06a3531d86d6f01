kvfit llama-3.1-8b --gpu h100-sxm --ctx 8k -t f16 -o sglang
