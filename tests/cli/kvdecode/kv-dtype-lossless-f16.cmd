kvdecode --layers 2 --vocab 1000 --prompt 16 --new 8 --threads 2 --kv-dtype f16 --cache both --tol 1e-3 2>&1 >/dev/null | grep ^tokens
