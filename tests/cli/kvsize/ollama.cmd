OLLAMA_MODELS=tests/ollama/models kvsize qwen3:30b example.com/team/gemma2
