kvfit tests/ckpt/bad-st-metadata-only/config.json --gpu h100-sxm --ctx 8k
