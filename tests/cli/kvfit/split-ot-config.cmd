kvfit qwen3-30b-a3b --engine llamacpp --gpu rtx-4090 --ctx 32k --override-tensor exps=CPU --host-mem 128GiB -u 1
