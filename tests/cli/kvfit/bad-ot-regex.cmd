kvfit tests/gguf/tiny-moe.gguf --gpu rtx-4090 -ot 'blk.(0|1=CPU'
