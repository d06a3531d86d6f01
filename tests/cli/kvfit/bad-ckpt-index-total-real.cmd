kvfit tests/ckpt/bad-index-total-real/config.json --gpu h100-sxm --ctx 8k
