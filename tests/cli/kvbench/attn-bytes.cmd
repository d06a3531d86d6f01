kvbench --bench attn --ctx 64 --kv-heads 3 --layers 2 --vocab 256 --kv-dtype f32,f16,bf16,fp8,int8,q8_0,q4_0,q4_1 --reps 1 --warmup 0 --membw-size 1MiB --sgemm-n 16 -j 1 | cut -f1-10,18
