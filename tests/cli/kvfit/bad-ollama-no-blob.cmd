OLLAMA_MODELS=tests/ollama/models kvfit broken:noblob --gpu h100-sxm
