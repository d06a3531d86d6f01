kvdecode tests/cli/kvdecode/tiny-llama.json --prompt 8 --new 2 --threads 2 --block-size 4,8 --summary /dev/fd/3 3>&1 >/dev/null 2>/dev/null | cut -f1-9,14,15
