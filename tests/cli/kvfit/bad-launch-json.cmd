kvfit llama-3.1-8b --gpu h100-sxm --ctx 8k --json -o vllm
