kvfit deepseek-v3 --gpu h200 --tp 8 --engine sglang --calibrate tests/results/sglang-deepseek-v3-h200.jsonl
