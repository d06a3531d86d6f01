kvdecode --layers 1 --vocab 1000 --prompt 8 --new 2 --threads 1,2 -o csv 2>/dev/null | cut -d, -f1-3,6,7
