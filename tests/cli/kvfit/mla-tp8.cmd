kvfit deepseek-v3 --gpu h200 --tp 8 --ctx 32k --weights-dtype fp8 --kv-dtype bf16,fp8
