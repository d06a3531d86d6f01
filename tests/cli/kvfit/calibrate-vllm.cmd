kvfit gpt-oss-20b --gpu a100-80gb --calibrate tests/results/vllm-gpt-oss-20b-a100.json
