kvfit deepseek-v3 --gpu h200 --isl 2000 --osl 500 --request-rate 10 --disagg --tp 8 --dp 8 --dp-attention --ep 8 --decode-tp 4
