kvfit tests/vision/qwen2.5-vl-7b-instruct/config.json --gpu h100-sxm --ctx 32k --images 1
