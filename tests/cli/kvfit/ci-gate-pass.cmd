kvfit llama-3.1-70b --gpu h100-sxm --tp 4 --ctx 32k --min-users 15 --no-header
