kvfit deepseek-v3 --gpu h200 --isl 2000 --osl 500 --solve gpus --request-rate 20 --max-ttft 1000 --max-tpot 40 --kv-link 50
