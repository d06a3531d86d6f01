kvbench --bench attn --kv-heads 5 --ctx 64 --layers 1 --vocab 256
