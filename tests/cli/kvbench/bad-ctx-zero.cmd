kvbench --bench attn --ctx 0
