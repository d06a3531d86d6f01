kvfit tests/configs/qwen2.5-omni-7b.json --gpu h100-sxm --audio-seconds 40
