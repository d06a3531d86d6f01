kvfit llama-4-scout --gpu h200 --images 1
