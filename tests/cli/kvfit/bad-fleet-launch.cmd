kvfit deepseek-v3 --gpu h200 --tp 8 --isl 2000 --osl 500 --request-rate 10 --disagg -o vllm
