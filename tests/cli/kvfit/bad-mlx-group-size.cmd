kvfit tests/bad/mlx-group-size.json --gpu h100-sxm --ctx 8k
