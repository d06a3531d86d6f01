kvfit tests/bad/quant-unknown.json --gpu h100-sxm --ctx 8k --engine vllm
