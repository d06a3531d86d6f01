kvfit deepseek-v3 --gpu h200 --tp 8 --spec-method mtp --spec-tokens 3 --acceptance 0.8 --isl 1000 --osl 500 --users 1:256:x2
