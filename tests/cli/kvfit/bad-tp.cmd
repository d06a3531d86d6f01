kvfit llama-3.1-8b --gpu h100 --tp 3 --ctx 8k
