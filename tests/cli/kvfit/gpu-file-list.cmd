kvfit --gpu-file tests/cli/kvfit/data/local.json --list-gpus
