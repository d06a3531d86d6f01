kvbench --bench attn gemma-2-9b --layers 1 --vocab 256
