kvfit deepseek-v3 --gpu h200 --weights-dtype fp8 --kv-dtype fp8 --ctx 8k --engine vllm --tp 1 --data-parallel-size 8 --enable-expert-parallel -o tsv
