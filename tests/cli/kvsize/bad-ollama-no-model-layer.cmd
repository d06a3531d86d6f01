OLLAMA_MODELS=tests/ollama/models kvsize broken:nolayer
