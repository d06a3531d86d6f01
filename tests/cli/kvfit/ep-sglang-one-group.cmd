kvfit deepseek-v3 --gpu h200 --engine sglang --tp-size 8 --enable-dp-attention --ctx 8k -o tsv
