kvsize gpt2 --ctx 8192
