kvfit tests/gguf/tiny-q4_k_m.gguf --gpu rtx-4090 --bw-efficiency 0.8 --flops-efficiency 0.5 -ngl 1 --host-mem 64GiB --isl 1000 --osl 100 -u 1,40
