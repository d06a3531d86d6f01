kvsize llama-3.1-8b --tp 32 -c 1 && kvsize qwen2.5-7b --tp 7
