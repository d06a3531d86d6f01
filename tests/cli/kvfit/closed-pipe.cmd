kvfit llama-3.1-8b --gpu h100 --ctx 1:131072:+1 --no-header | head -2
