kvfit tests/ckpt/bad-st-nul-name/config.json --gpu h100-sxm --ctx 8k
