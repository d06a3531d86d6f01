kvsize llama-3.1-70b --ctx 8k --tp 4 | kvfit --gpu h100-sxm --tp 2 -
