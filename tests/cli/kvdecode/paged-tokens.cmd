kvdecode --layers 2 --vocab 1000 --prompt 40 --new 8 --threads 2 --block-size 16 2>/dev/null | cut -f1,2,5,6
