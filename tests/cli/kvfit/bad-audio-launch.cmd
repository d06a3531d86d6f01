kvfit tests/configs/qwen2-audio-7b-instruct.json --gpu h100-sxm -o vllm --audio-seconds 10
