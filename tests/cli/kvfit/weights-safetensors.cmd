kvfit tests/ckpt/tiny/config.json --gpu l4 --ctx 512 --engine vllm
