kvfit tests/configs/qwen3-next-80b-a3b-instruct.json --gpu h200 --tp 2 --ctx 32k --engine sglang --spec-method mtp --spec-tokens 2
