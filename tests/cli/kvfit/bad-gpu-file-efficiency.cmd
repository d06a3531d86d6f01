kvfit --gpu-file tests/cli/kvfit/data/bad-gpu-file/efficiency.json --gpu local-j4 llama-3.1-8b --ctx 1k
