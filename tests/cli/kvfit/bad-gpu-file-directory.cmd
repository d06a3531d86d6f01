kvfit --gpu-file tests -v --list-gpus
