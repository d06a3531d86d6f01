cat configs/llama-3.1-8b.json | kvsize - --ctx 8k,32k | kvfit --gpu h100-sxm -
