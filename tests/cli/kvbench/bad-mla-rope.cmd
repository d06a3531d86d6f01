kvbench --bench attn --mla 256 --mla-rope 5
