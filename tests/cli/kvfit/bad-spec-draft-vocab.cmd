kvfit qwen2.5-72b --gpu h100-sxm --tp 4 --draft tests/configs/qwen2.5-3b-instruct.json --spec-tokens 4
