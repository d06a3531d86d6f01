kvfit llama-3.1-8b --gpu h100-sxm --ctx 8k --max-loras 2 --lora-target-modules q_proj,v_proj -o vllm
