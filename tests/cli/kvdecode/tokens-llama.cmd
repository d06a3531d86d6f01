kvdecode tests/cli/kvdecode/tiny-llama.json --prompt 12 --new 8 --users 3 --threads 2 2>/dev/null | cut -f1,2,5,6
