kvfit gemma-3-27b --gpu h100-sxm --ctx 8k --images 4 -o vllm; kvfit gemma-3-27b --gpu h100-sxm --ctx 8k --limit-mm-per-prompt '{"image": {"count": 4}}' --no-header | cut -f1,10,27,40-44
