kvfit llama-3.1-8b --gpu h100-sxm --save-gpu /tmp/kvfit-x.json
