kvfit tests/bad/quant-bits-string.json --gpu h100-sxm --ctx 8k
