kvfit tests/configs/qwen2.5-vl-7b-instruct.json --gpu h100-sxm --images 1 --image-size 20x500
