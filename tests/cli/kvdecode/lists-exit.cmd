{ kvdecode tests/cli/kvdecode/tiny-llama.json --prompt 40 --new 4 --threads 2 --block-size 16 --users 1,3 --pool-blocks 8 --cache on; echo "exit $?"; } 2>&1 | cut -f1-3,6 | grep -v "^time:"
