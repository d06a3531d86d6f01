kvfit tests/ckpt/bad-st-bom/config.json --gpu h100-sxm --ctx 8k
