kvfit --gpu-file tests/cli/kvfit/data/bad-gpu-file/threads.json --gpu-mem 80GB llama-3.1-8b --ctx 1k
