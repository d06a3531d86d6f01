kvsize llama-3.1-8b --users 0
