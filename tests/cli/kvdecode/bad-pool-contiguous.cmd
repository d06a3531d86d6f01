kvdecode --layout contiguous --block-size 16 --pool-blocks 10
