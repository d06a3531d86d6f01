kvfit llama-3.1-8b --gpu h100-sxm --spec-method ngram --spec-tokens 3 --acceptance-length 5 --isl 100 --osl 10
