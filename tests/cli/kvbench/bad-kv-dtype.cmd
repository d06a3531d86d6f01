kvbench --bench attn --kv-dtype fp8
