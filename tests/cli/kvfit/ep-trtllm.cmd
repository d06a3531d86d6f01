kvfit deepseek-v3 --gpu h200 --weights-dtype fp8 --kv-dtype fp8 --ctx 8k --engine trtllm --tp 8 --enable_attention_dp --moe_expert_parallel_size 8 -o tsv
