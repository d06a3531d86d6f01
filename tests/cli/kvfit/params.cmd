kvfit --params llama-3.1-8b llama-3.1-70b mistral-7b-v0.1 gpt2 mixtral-8x7b qwen2.5-7b qwen3-30b-a3b deepseek-v3 --weights-dtype bf16
