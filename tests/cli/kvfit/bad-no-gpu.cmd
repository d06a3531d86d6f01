kvfit llama-3.1-8b --ctx 8k
