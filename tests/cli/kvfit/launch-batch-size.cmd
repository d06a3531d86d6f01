kvfit llama-3.1-8b --gpu h100-sxm --engine llamacpp --ctx 8k --batch-size 256 --no-header | cut -f10,25; kvfit llama-3.1-8b --gpu h100-sxm --ctx 8k --max-num-batched-tokens 4096 -o llama-server
