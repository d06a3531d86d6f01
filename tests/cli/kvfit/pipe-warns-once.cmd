kvsize gemma-2-9b --ctx 16k | kvfit --gpu h100-sxm - | cut -f1,9,10
