kvfit gemma-3-27b --gpu h100-sxm --ctx 8k --limit-mm-per-prompt '{"image": 1, "video": 2}'
