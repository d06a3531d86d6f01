kvfit deepseek-v3 --gpu h200 --tp 8 --ep 16
