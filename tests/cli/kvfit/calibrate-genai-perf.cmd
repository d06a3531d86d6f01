kvfit llama-3.1-8b --gpu h100-sxm --calibrate tests/results/genai-perf-llama-3.1-8b-h100.json
