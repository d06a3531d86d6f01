kvfit llama-3.1-8b --gpu rtx-5090 --ctx 8k --isl 1000 --osl 200 -o json
