kvsize llama-3.1-8b gpt2 qwen3-8b
