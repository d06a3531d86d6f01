kvbench --bench attn --ctx 64 --layers 1 --vocab 256 --users 4294967297
