kvfit tests/configs/qwen2.5-vl-7b-instruct.json --gpu h100-sxm --ctx 8k --images 2 --image-size 1280x720 --isl 1000 --osl 200
