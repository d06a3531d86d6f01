KV_CONFIG_PATH=configs:tests/configs kvsize --list
