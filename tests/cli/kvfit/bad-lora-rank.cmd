kvfit llama-3.1-8b --gpu l40s --max-lora-rank 24
