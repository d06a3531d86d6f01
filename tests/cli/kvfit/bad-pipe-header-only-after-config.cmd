kvsize gpt2 --ctx 1k | head -1 | kvfit --gpu h100-sxm configs/gpt2.json -
