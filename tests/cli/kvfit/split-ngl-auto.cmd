kvfit tests/gguf/qwen3-30b-a3b.gguf --gpu-mem 12GiB --bandwidth 360 --weights 18.6GB --ctx 32k -ngl auto --host-mem 64GiB
