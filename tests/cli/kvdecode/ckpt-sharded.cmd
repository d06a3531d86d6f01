kvdecode tests/ckpt/tiny-sharded --prompt-ids 1,2,3 --new 8 --threads 1 2>&1 | cut -f1,2,5,6 | grep -v "^time:\|^largest\|^text:\|^kvdecode:"
