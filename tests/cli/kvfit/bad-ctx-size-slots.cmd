kvfit llama-3.1-8b --gpu h100-sxm --engine llamacpp --ctx-size 3 --parallel 4
