kvdecode tests/ckpt/tiny-gpt2 --prompt-ids 1,2,3 --new 8 --threads 2 2>&1 | cut -f1,2,5,6 | grep -v "^time:\|^largest"
