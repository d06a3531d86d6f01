kvfit --list-gpus
