kvdecode tests/cli/kvdecode/tiny-llama.json --prompt 40 --new 4 --threads 2 --block-size 8:32:x2 2>&1 | cut -f1-3,6,7 | grep -v -e "^time:" -e "^largest"
