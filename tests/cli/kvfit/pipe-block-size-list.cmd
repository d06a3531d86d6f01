kvsize llama-3.1-8b --ctx 1000 --block-size 16,32 | kvfit --gpu h100 --block-size 16,32,64 - | cut -f1,6,7,9,20-22,26
