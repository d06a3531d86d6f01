kvdecode --lengths 10,200,33 --block-size 16,32
