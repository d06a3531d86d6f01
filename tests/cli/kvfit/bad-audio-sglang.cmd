kvfit tests/configs/qwen2-audio-7b-instruct.json --gpu h100-sxm --engine sglang --audio-seconds 10
