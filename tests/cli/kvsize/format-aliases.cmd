kvsize llama-3.1-8b -t bfloat16,FP8_E4M3,float32,auto -c 8k
