kvfit --gpu-file tests/cli/kvfit/data/bad-gpu-file/threads.json --list-gpus
