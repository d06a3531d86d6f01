kvfit llama-3.1-8b --gpu h100-sxm --engine trtllm --spec-method eagle --draft tests/configs/eagle3-llama3.1-instruct-8b.json --spec-tokens 3
