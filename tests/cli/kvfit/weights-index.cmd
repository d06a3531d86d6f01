kvfit tests/ckpt/gpt-oss-20b/config.json --gpu h100-sxm --ctx 8k --engine vllm
