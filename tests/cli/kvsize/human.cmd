kvsize llama-3.1-8b deepseek-v3 -H -c 8k,128k
