kvfit deepseek-v3 --gpu h200 --tp 8 --enable-expert-parallel --ep 8
