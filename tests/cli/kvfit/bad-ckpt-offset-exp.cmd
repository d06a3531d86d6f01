kvfit tests/ckpt/bad-st-offset-exp/config.json --gpu h100-sxm --ctx 8k
