kvfit llama-3.1-8b --gpu h100 --ctx 4k --prefix 8k
