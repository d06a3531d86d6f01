kvsize llama-3.1-8b --ctx 8k --block-size 16,2097152
