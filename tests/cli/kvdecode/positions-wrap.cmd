kvdecode --layers 1 --vocab 256 --threads 1 --prompt 4 --new 18446744073709551613
