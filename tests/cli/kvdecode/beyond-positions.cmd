kvdecode tests/cli/kvdecode/tiny-llama.json --prompt 70 --new 2 --cache on --threads 2 2>&1 | cut -f1,2,5 | grep -v "^time:"
