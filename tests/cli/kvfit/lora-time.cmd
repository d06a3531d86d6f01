kvfit llama-3.1-8b --gpu h100-sxm --max-loras 4 --max-lora-rank 64 --isl 1024 --osl 128 --users 1,32
