kvfit --gpu-file tests/cli/kvfit/data/bad-gpu-file/efficiency-like.json --list-gpus
