kvfit deepseek-v3 --gpu h200 --weights-dtype fp8 --kv-dtype fp8 --ctx 8k --engine all --tp 8 --dp-attention --ep 8 -o tsv
