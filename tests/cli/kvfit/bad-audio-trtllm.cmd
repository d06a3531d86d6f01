kvfit tests/configs/qwen2-audio-7b-instruct.json --gpu h100-sxm --engine trtllm --audio-seconds 10
