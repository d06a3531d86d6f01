kvfit llama-3.1-405b --gpu h100-sxm --tp 8 --pp 2 --ctx 128k --weights-dtype fp8 --kv-dtype fp8
