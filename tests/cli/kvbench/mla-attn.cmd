kvbench --bench attn --ctx 64 --kv-heads 12,3 --mla off,32 --layers 2 --vocab 256 --reps 1 --warmup 0 --membw-size 4MiB -j 1 | cut -f1-6,9,10,18
