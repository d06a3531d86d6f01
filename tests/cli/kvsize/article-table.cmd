kvsize gpt2 llama-3.1-8b llama-3.1-70b deepseek-v3 --ctx 8192 --no-header && kvsize llama-3.1-8b deepseek-v3 --mha --ctx 8192 --no-header && kvsize llama-3.1-8b --kv-dtype fp8 --ctx 8192 --no-header
