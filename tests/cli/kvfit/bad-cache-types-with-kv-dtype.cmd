kvfit llama-3.1-8b --gpu h100 --kv-dtype fp8 --cache-type-v q4_0
