kvfit llama-3.1-70b --gpu h100-sxm -tp 4
