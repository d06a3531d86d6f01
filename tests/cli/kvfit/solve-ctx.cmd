kvfit llama-3.1-70b --gpu h100-sxm --tp 4 --users 20 --solve ctx
