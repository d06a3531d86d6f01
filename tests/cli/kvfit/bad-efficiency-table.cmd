KV_CONFIG_PATH=tests/cli/kvfit/data/bad-eff:configs kvfit llama-3.1-8b --gpu h100-sxm --isl 1000 --osl 200
