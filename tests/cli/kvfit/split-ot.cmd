kvfit tests/gguf/tiny-moe.gguf --gpu rtx-4090 --ctx 4k -ot 'blk\.[01]\.ffn_(up|down)_exps=CPU' -ot attn_v=CPU,output=CUDA0 -ngl 2 --host-mem 64GiB -u 1
