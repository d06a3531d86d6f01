kvdecode --prefix-reuse --layers 2 --vocab 1000 --prompt 100 --new 4 --threads 2 2>/dev/null | cut -f1-10
