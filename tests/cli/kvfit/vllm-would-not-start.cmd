kvfit llama-3.1-8b --gpu l4 --ctx 128k
