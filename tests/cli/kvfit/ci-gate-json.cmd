kvfit llama-3.1-70b.json --gpu h100-sxm --tp 4 --ctx 32k --min-users 20 --json
