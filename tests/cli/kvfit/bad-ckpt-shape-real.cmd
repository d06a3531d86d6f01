kvfit tests/ckpt/bad-st-shape-real/config.json --gpu h100-sxm --ctx 8k
