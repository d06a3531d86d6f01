kvbench --bench attn deepseek-v3 --layers 1 --vocab 256
