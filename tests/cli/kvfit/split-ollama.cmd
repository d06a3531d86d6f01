OLLAMA_MODELS=tests/ollama/models kvfit qwen3:30b-gpu30 --gpu h100-sxm --kv-dtype q8_0 --host-mem 128GiB
