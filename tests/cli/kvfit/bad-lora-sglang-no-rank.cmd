kvfit llama-3.1-8b --gpu l40s --engine sglang --max-loras 2
