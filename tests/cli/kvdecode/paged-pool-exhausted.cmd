kvdecode --layers 2 --vocab 1000 --prompt 40 --new 8 --threads 2 --block-size 16 --users 3 --pool-blocks 8 >/dev/null
