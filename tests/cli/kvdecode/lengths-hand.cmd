kvdecode --lengths 1,16,17 --block-size 16 --layers 1 --kv-heads 1
