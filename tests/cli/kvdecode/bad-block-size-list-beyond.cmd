kvdecode --block-size 16,500 --prompt 100 --new 8
