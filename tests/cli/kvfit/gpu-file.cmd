kvfit --gpu-file tests/cli/kvfit/data/local.json --gpu local llama-3.1-8b --ctx 1k,8k
