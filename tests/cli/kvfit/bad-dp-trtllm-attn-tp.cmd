kvfit deepseek-v3 --gpu h200 --tp 8 --dp 4 --dp-attention --ep 8 --engine trtllm
