kvfit llama-3.1-8b --gpu h100-sxm --ctx 8k --spec-method ngram --spec-tokens 3 -o llama-server
