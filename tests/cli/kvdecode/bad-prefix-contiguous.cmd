kvdecode --prefix-reuse --layout contiguous --layers 1 --vocab 256
