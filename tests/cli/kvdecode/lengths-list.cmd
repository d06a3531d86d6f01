kvdecode --lengths 10,200,33 --block-size 32 --json
