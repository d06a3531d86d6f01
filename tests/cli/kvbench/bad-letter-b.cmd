kvbench -b attn
