kvfit mixtral-8x7b qwen3-30b-a3b --gpu h200 --ctx 4k --users 1
