kvbench --bench attn --kv-dtype f32,q5_1
