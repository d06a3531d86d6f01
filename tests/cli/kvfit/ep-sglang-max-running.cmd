kvfit deepseek-v3 --gpu h200 --engine sglang --tp 8 --dp-size 8 --enable-dp-attention --ep 8 --ctx 8k --max-running-requests 256 -o tsv
