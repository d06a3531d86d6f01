kvsize llama-3.1-8b --ctx 8k --max-model-len 32k
