kvsize llama-3.1-70b --ctx 8k,32k --tp 4 --users 10 | kvfit --gpu h100-sxm -
