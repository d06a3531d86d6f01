kvdecode --layers 2 --vocab 1000 --prompt 16 --new 6 --kv-heads 3 --threads 1 2>/dev/null | cut -f1,2,5,6
