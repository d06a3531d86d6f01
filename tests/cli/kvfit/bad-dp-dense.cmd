kvfit llama-3.1-8b --gpu h100-sxm --tp 1 --dp 2
