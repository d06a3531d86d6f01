kvsize llama-3.1-8b openelm-270m --json -c 8k,128K
