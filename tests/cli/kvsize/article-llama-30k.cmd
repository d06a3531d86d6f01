kvsize llama-3.1-8b --ctx 30000 --users 1,20 && kvsize llama-3.1-8b --mha --ctx 30000 --no-header
