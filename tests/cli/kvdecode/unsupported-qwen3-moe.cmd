kvdecode qwen3-30b-a3b --layers 1 --vocab 256
