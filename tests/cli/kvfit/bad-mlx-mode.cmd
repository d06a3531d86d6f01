kvfit tests/bad/mlx-mode.json --gpu h100-sxm --ctx 8k
