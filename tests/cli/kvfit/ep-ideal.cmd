kvfit deepseek-v3 --gpu h200 --weights-dtype fp8 --kv-dtype fp8 --ctx 8k --engine ideal --tp 1 --dp 8 --ep 8 --ep-imbalance 1.3 -o tsv
