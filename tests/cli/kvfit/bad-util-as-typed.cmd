kvfit llama-3.1-8b --gpu h100 --gpu-memory-utilization 92
