kvfit llama-3.1-405b --gpu-mem 1GB --solve tp --users 1 --ctx 8k
