kvfit deepseek-v3 --gpu h200 --tp 8 --spec-method mtp --draft tests/configs/llama-3.2-1b-instruct.json --spec-tokens 2
