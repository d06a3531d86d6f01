kvfit llama-3.1-8b --gpu rtx-5090 --ctx 32k --wired-limit-mb 0
