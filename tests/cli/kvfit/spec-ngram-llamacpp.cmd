kvfit qwen3-8b --gpu l40s --engine llamacpp --spec-method ngram --spec-tokens 8 --acceptance 0.5 --isl 2000 --osl 300 --users 1,4
