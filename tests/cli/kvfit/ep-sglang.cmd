kvfit deepseek-v3 --gpu h200 --weights-dtype fp8 --kv-dtype fp8 --ctx 8k --engine sglang --tp-size 8 --dp-size 8 --enable-dp-attention --ep-size 8 -o tsv
