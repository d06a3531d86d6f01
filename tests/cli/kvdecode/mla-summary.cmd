kvdecode --layers 2 --vocab 1000 --prompt 16 --new 8 --threads 2 --mla 256 2>&1 >/dev/null | grep -v -e "^time:" -e "^largest"
