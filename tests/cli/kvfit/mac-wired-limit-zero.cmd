kvfit llama-3.1-8b --gpu m4-max-128gb --ctx 32k --wired-limit-mb 0
