kvfit gpt2 --gpu l4 --pp 13
