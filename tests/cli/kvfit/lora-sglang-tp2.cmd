kvfit llama-3.1-8b --gpu h100-sxm --tp 2 --engine sglang --max-loras-per-batch 8 --max-lora-rank 32 --max-loaded-loras 16 --ctx 32k
