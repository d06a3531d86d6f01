kvfit deepseek-v3 --gpu h200 --isl 2000 --osl 500 --solve gpus --request-rate 20 --ep 8
