kvdecode --prefix-reuse --cache off --layers 1 --vocab 256
