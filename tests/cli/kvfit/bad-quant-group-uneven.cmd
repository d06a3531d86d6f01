kvfit tests/bad/quant-group-uneven.json --gpu h100-sxm --ctx 8k
