kvfit llama-3.1-8b --gpu h100-sxm --tp 16 --ctx 8k
