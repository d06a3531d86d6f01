kvdecode --block-size 0
