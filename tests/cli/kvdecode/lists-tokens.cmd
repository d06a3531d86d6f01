kvdecode tests/cli/kvdecode/tiny-llama.json --prompt 16 --new 4 --users 1,2 --threads 1,2 2>/dev/null | cut -f1-4,7,8
