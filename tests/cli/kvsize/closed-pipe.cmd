kvsize llama-3.1-8b --ctx 1:100000:+1 --no-header | head -2
