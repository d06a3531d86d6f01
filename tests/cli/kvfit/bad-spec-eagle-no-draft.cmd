kvfit llama-3.1-8b --gpu h100-sxm --spec-method eagle --spec-tokens 3
