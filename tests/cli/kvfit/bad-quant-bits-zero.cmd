kvfit tests/bad/quant-bits-zero.json --gpu h100-sxm --ctx 8k
