kvsize llama-3.1-8b --ctx 1000 --block-size 16,32 | kvfit --gpu h100 --block-size 16,64 -
