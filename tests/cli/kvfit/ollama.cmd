OLLAMA_MODELS=tests/ollama/models kvfit qwen3:30b --gpu h100-sxm --kv-dtype q8_0
