kvfit qwen2.5-7b --gpu l40s --max-loras 8 --max-lora-rank 16 --lora-target-modules q_proj,v_proj --ctx 8k
