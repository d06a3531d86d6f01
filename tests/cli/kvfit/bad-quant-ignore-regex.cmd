kvfit tests/bad/quant-ignore-regex.json --gpu h100-sxm --ctx 8k
