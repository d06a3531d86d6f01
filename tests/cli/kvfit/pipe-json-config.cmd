kvfit --gpu h100 --ctx 8k - < configs/llama-3.1-8b.json
