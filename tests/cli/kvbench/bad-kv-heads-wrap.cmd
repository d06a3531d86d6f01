kvbench --bench attn --ctx 64 --layers 1 --vocab 256 --kv-heads 4294967297
