kvdecode --dry-run --prompt 5 --new 3 --block-size 4 && kvdecode --dry-run --prompt 5 --new 3 --block-size 4 --users 2 --pool-blocks 3 --no-header
