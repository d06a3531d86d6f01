kvdecode deepseek-v2-lite --layers 1 --vocab 1000 --prompt 8 --new 4 --threads 2 2>&1 >/dev/null | grep -v -e "^time:" -e "^largest"
