kvfit tests/configs/qwen2.5-omni-7b.json --gpu h100-sxm --engine vllm --ctx 8k --audio-seconds 10 --isl 200 --osl 200
