kvfit tests/bad/mlx-group-uneven.json --gpu h100-sxm --ctx 8k
