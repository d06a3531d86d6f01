kvfit --gpu-file tests/bad/not-json.json --list-gpus
