kvdecode tests/cli/kvdecode/tiny-llama.json --prompt 16 --new 4 --users 1,2 --threads 1,2 2>&1 >/dev/null | grep -v -e "^time:" -e "^largest"
