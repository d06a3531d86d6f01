kvfit tests/configs/llama-3.2-90b-vision-instruct.json --gpu h200 --tp 2 --images 1
