kvfit tests/ckpt/bad-offsets/config.json --gpu h100-sxm --ctx 8k
