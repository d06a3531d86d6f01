kvdecode --dry-run --prompt 6 --new 3 --block-size 4,8 --users 1,2 --threads 1 -o md
