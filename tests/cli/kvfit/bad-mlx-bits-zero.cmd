kvfit tests/bad/mlx-bits-zero.json --gpu h100-sxm --ctx 8k
