kvsize llama-3.1-8b --block-size 0
