kvsize llama-3.1-8b -ctk q8_0
