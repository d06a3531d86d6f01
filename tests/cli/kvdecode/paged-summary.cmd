kvdecode --layers 2 --vocab 1000 --prompt 40 --new 8 --threads 2 --block-size 16 2>&1 >/dev/null | grep -e "^kv cache" -e "^tokens"
