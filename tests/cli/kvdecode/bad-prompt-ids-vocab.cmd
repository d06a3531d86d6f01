kvdecode tests/ckpt/tiny-gpt2 --prompt-ids 1,999 --new 2
