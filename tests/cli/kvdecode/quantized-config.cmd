kvdecode tests/ckpt/tiny-awq --prompt 4 --new 2 --cache on --no-header --threads 1 2>&1 | cut -f1,2 | grep -v "^time:"
