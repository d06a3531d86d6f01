kvdecode tests/cli/kvdecode/tiny-llama.json --prompt 8 --new 2 --threads 1,2 -o csv 2>/dev/null | cut -d, -f1-3,6,7
