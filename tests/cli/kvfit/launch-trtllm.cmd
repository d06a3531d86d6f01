kvfit llama-3.1-8b --gpu h100-sxm --ctx 8k -o trtllm; kvfit gemma-3-27b --gpu h100-sxm --ctx 32k -t fp8 --block-size 64 --max-attention-window 1024,32768 -o trtllm
