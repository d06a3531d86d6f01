HF_HUB_CACHE=tests/hf-cache kvfit openai/gpt-oss-20b tests/ckpt/gpt-oss-20b --gpu h100-sxm --ctx 8k
