kvfit llama-4-scout --gpu h100-sxm --tp 4 --ctx 128k,32k | cut -f1,6,9,20,21,22,25,26
