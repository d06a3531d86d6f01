kvfit deepseek-v3 --gpu h200 --tp 8 --isl 4k --osl 1k --users 1,64 --engine all
