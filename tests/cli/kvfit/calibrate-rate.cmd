kvfit llama-3.1-8b --gpu h100-sxm --calibrate tests/results/sglang-rate-made-up.jsonl
