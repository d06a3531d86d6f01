kvfit tests/bad/mlx-bits-nine.json --gpu h100-sxm --ctx 8k
