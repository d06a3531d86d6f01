kvfit llama-3.1-8b --gpu h100-sxm --ctx 8k --speculative-config '{"method": "eagle3", "model": "eagle3-llama3.1-instruct-8b", "num_speculative_tokens": 3}' --speculative-algorithm EAGLE3 --no-header
