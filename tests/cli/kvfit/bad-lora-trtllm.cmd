kvfit llama-3.1-8b --gpu l40s --engine trtllm --max-loras 2
