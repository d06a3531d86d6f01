kvdecode tests/cli/kvdecode/tiny-llama.json --prefix-reuse --prompt 40 --new 4 --threads 2 --block-size 16,32 2>&1 | cut -f1-11 | sed "s/[0-9.]* ms/N ms/g"
