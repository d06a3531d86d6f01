kvfit tests/gguf/tiny-moe.gguf --gpu rtx-4090 --override-tensor exps
