kvfit tests/configs/qwen2-audio-7b-instruct.json --gpu h100-sxm --engine vllm --ctx 8k --audio-seconds 30 --isl 200 --osl 200
