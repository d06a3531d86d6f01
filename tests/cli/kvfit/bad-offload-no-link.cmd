kvfit llama-3.1-8b --gpu-mem 80GiB --bandwidth 3350 --tflops 989 --kv-offload 64GiB --prefix-hit 0.5 --isl 1000 --osl 10
