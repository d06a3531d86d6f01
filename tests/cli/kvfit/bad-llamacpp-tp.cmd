kvfit llama-3.1-8b --gpu h100-sxm --engine llamacpp --tp 2 --ctx 8k
