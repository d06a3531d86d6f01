kvfit llama-3.1-8b --gpu h100 --block-size 16,,32
