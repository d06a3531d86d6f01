kvfit llama-4-scout --gpu h200 --tp 2 --ctx 8k --images 1 --image-size 1280x720
