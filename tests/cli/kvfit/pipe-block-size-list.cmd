kvsize llama-3.1-8b --ctx 1000 --block-size 16,32 | kvfit --gpu h100 --block-size 16,32,64 - | cut -f1,6,8,10,21-23,27
