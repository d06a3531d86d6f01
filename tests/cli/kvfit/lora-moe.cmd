kvfit mixtral-8x7b --gpu h100-sxm --tp 2 --max-loras 2 --max-lora-rank 16 --ctx 8k --engine all
