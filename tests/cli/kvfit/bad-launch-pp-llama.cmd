kvfit llama-3.1-70b --gpu h100-sxm --pp 2 --ctx 8k -o llama-server
