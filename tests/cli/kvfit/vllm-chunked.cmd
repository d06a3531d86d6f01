kvfit llama-4-scout --gpu h100-sxm --tp 4 --ctx 128k,32k | cut -f1,6,10,21,22,23,26,27
