kvfit llama-3.1-8b --gpu h100-sxm --calibrate tests/bad/result-rate-only.jsonl
