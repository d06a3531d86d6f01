kvfit deepseek-v3 --gpu h200 --isl 2000 --osl 500 --request-rate 10 --disagg --ep 8 --dp-attention --tp 8 --engine sglang --kv-link 50
