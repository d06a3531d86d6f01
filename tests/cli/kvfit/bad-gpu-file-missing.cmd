kvfit --gpu-file tests/cli/kvfit/data/no-such-gpus.json --gpu local llama-3.1-8b --ctx 1k
