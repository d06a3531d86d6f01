KV_CONFIG_PATH=tests/cli/kvfit/data/bad-gpus:configs kvfit llama-3.1-8b --gpu x
