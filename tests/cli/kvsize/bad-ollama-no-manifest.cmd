OLLAMA_MODELS=tests/ollama/models kvsize qwen3:8b
