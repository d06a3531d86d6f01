kvsize llama-3.1-8b --tp 3
