kvfit glm-4.7-flash --gpu h100-sxm --engine llamacpp --spec-method mtp --spec-tokens 1
