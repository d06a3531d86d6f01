kvfit tests/gguf/tiny-q4_k_m.gguf --gpu-mem 1MiB --ctx 4k --solve layers --host-mem 64GiB
