kvfit --gpu-file tests/cli/kvfit/data/bad-gpu-file/unified.json --list-gpus
