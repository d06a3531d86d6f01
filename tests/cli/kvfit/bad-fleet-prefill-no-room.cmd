kvfit llama-3.1-70b --gpu h100-sxm --isl 1000 --osl 200 --disagg --decode-tp 4
