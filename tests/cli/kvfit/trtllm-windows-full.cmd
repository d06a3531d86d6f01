kvfit mistral-7b-v0.1 gemma-3-27b gpt-oss-20b --gpu h100-sxm --ctx 32k --engine trtllm | cut -f1,6,10,19,21,26,27
