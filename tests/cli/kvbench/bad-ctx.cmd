kvbench --bench attn --ctx 8k:1k:x2
