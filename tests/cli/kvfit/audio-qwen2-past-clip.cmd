kvfit tests/configs/qwen2-audio-7b-instruct.json --gpu h100-sxm --audio-seconds 45
