kvdecode --layers 2 --vocab 1000 --prompt 16 --new 4 --kv-dtype q4_1 --dry-run
