kvdecode --block-size 500 --prompt 100 --new 8
