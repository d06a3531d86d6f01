kvdecode --block-size 16 --pool-blocks 2
