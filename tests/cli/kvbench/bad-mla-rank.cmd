kvbench --bench attn --mla off,769
