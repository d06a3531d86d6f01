kvsize llama-3.1-8b --ctx 128k --users 1099511627776
