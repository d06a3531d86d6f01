kvbench --bench attn --layout paged --block-size 64 --ctx 32 --layers 1 --vocab 256
