kvfit tests/gguf/tiny-q4_k_m.gguf --gpu rtx-4090 --ctx 4k --n-gpu-layers all --host-mem 64GiB -u 1
