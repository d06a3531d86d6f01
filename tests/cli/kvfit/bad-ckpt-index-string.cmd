kvfit tests/ckpt/bad-index-string/config.json --gpu h100-sxm --ctx 8k
