kvfit tests/ckpt/bad-index-bom/config.json --gpu h100-sxm --ctx 8k
