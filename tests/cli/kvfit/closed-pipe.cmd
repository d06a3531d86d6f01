kvfit llama-3.1-8b --gpu h100 --ctx 1:90000:+1 --no-header | head -2 | cut -f1-6,8-11
