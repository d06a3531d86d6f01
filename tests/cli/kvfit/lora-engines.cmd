kvfit llama-3.1-8b --gpu l40s --max-loras 4 --max-lora-rank 64 --ctx 8k --engine all
