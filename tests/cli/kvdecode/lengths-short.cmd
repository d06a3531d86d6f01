kvdecode --layers 1 --vocab 256 --threads 1 --lengths 1,3
