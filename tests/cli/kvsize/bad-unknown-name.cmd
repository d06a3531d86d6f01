kvsize llama-9
