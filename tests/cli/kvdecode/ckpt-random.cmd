kvdecode tests/ckpt/tiny-gpt2 --random-weights --prompt-ids 1,2,3 --new 3 --cache on --threads 1 2>&1 | cut -f1,2,5 | grep -v "^time:\|^largest"
