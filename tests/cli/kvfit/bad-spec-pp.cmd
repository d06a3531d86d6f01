kvfit llama-3.1-70b --gpu h100-sxm --tp 2 --pp 2 --draft tests/configs/llama-3.2-1b-instruct.json --spec-tokens 4
