kvfit tests/gguf/tiny-moe.gguf --gpu rtx-4090 --ctx 4k --n-cpu-moe 2 --host-mem 64GiB -u 1
