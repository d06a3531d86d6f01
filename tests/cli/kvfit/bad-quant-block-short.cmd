kvfit tests/bad/quant-block-short.json --gpu h100-sxm --ctx 8k
