kvfit tests/bad/mlx-override-kind.json --gpu h100-sxm --ctx 8k
