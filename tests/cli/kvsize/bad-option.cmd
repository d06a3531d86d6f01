kvsize --frobnicate llama-3.1-8b
