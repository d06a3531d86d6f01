kvfit gpt2 --gpu l4 --ctx 1024 --prefix 1024 --engine all
