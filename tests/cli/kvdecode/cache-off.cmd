kvdecode tests/cli/kvdecode/tiny-llama.json --prompt 5 --new 4 --cache off --threads 2 2>&1 | cut -f1,2,3,5,6,7 | grep -v "^time:"
