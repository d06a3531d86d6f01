kvsize llama-3.1-8b gemma-2-9b --ctx 8k -o md && kvsize llama-3.1-8b --ctx 8k,32k -o csv && kvfit llama-3.1-8b --gpu h100 --ctx 8k -o csv --engine ideal | cut -d, -f1-6,8-13
