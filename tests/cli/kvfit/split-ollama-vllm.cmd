OLLAMA_MODELS=tests/ollama/models kvfit qwen3:30b-gpu30 --gpu h100-sxm --engine vllm --ctx 8k
