kvfit llama-3.1-8b --gpu h100-sxm --ctx 8k --solve tp --users 4 --tp 2
