kvdecode tests/ckpt/tiny-gpt2 --prompt "the cache keeps the" --new 3 --cache on --threads 1 --users 1,2 2>&1 | cut -f1-3,6,9 | grep -v "^time:"
