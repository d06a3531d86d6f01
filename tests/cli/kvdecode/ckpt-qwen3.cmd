kvdecode tests/ckpt/tiny-qwen3 --prompt-ids 100,200,300 --new 8 --threads 2 2>&1 | cut -f1,2,5,6 | grep -v "^time:\|^largest\|^text:"
