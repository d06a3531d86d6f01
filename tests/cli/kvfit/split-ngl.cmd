kvfit tests/gguf/tiny-q4_k_m.gguf --gpu rtx-4090 --ctx 4k -ngl 1 --host-mem 32MiB
