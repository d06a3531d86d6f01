kvdecode --mla 256 --block-size 16
