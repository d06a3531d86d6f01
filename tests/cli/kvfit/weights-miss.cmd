kvfit llama-3.1-70b --gpu h100-sxm --ctx 32k --min-users 1
