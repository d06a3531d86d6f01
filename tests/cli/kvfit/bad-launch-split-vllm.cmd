kvfit llama-3.1-8b --gpu h100-sxm --ctx 8k --n-gpu-layers 20 -o vllm
