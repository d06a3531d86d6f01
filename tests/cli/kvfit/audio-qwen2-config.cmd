kvfit tests/configs/qwen2-audio-7b-instruct.json --gpu h100-sxm --engine vllm --ctx 8k
