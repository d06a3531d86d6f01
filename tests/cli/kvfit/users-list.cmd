kvfit llama-3.1-8b --gpu h100 --ctx 8k --users 1,8,64 --engine ideal | cut -f1,10,30,31,36
