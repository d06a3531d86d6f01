kvfit llama-3.1-8b --gpu h100-sxm --isl 1000 --osl 200 --solve gpus --request-rate 20 --max-ttft 500 --max-tpot 15
