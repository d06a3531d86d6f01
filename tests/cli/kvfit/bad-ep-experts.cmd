kvfit deepseek-v3 --gpu h200 --weights-dtype fp8 --tp 6 --ep 6
