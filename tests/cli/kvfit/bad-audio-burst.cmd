kvfit tests/configs/qwen2-audio-7b-instruct.json --gpu h100-sxm --audio-seconds 10 --isl 200 --osl 200 --arrivals burst
