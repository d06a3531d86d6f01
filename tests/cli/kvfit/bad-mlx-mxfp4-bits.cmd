kvfit tests/bad/mlx-mxfp4-bits.json --gpu h100-sxm --ctx 8k
