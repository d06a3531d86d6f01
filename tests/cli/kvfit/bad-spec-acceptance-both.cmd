kvfit llama-3.1-8b --gpu h100-sxm --spec-method ngram --spec-tokens 3 --acceptance 0.7 --acceptance-length 2
