kvdecode tests/ckpt/tiny-gpt2 --prompt "the cache keeps the" --new 4 --cache on --threads 1 2>&1 | cut -f1,2,5,8 | grep -v "^time:"
