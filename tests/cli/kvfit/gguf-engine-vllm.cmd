kvfit tests/gguf/tiny-q4_k_m.gguf --gpu h100 --ctx 4k --engine vllm
