kvfit tests/ckpt/bad-index-zero/config.json --gpu h100-sxm --ctx 8k
