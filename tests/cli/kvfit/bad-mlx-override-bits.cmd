kvfit tests/bad/mlx-override-bits.json --gpu h100-sxm --ctx 8k
