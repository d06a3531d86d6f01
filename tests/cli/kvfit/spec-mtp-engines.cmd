kvfit deepseek-v3 --gpu h200 --tp 8 --ctx 8192 --engine all --spec-method mtp --spec-tokens 3
