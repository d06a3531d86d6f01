kvfit llama-3.1-8b --gpu h100-sxm --ctx 8k --spec-method eagle3 --draft eagle3-llama3.1-instruct-8b --spec-tokens 3 -o trtllm
