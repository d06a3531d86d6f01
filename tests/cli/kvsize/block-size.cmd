kvsize mistral-7b-v0.1 -b 16 -c 100,5000 && kvsize llama-3.1-8b -b 256 -c 1,257 --no-header
