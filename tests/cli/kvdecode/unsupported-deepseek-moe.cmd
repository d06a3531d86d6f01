kvdecode tests/configs/deepseek-moe-16b.json --layers 1 --vocab 256
