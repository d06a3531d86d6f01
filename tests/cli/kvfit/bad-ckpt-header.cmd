kvfit tests/ckpt/bad-header/config.json --gpu h100-sxm --ctx 8k
