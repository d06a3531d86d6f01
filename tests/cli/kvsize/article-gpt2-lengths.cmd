kvsize gpt2.json --ctx 1000,8000,32000
