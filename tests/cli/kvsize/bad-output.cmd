kvsize llama-3.1-8b -o xml
