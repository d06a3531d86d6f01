kvfit llama-3.1-8b --gpu h100-sxm --ctx 8k --speculative-config '{"method": "medusa", "num_speculative_tokens": 2}'
