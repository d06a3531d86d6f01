kvfit tests/gguf/tiny-moe.gguf --gpu rtx-4090 --ctx 4k -cmoe --host-mem 64GiB -u 1
