kvfit llama-3.1-8b --gpu l4 --isl 1000 --osl 200 --users 1,8 | cut -f1,2,30,45,46,48,55
