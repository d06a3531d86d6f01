kvsize tests/quant/mlx-qwen3-14b-4bit.json tests/configs/qwen3-14b.json tests/quant/mlx-gpt-oss-20b-mxfp4-q8.json gpt-oss-20b --ctx 32k
