kvfit llama-3.1-8b --gpu h100-sxm --engine llamacpp --ctx 8k --ctx-size 32k
