kvfit llama-3.1-8b --gpu h100-sxm --spec-method ngram --spec-tokens 3 --acceptance 0.6 --isl 1000 --osl 100 --users 8 --arrivals burst
