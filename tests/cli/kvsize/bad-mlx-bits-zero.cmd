kvsize tests/bad/mlx-bits-zero.json
