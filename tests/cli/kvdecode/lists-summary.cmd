kvdecode --layers 2 --vocab 1000 --prompt 16 --new 4 --users 1,2 --threads 1,2 2>&1 >/dev/null | grep -v -e "^time:" -e "^largest"
