kvsize llama-3.1-8b -c 1000 -b 16,256
