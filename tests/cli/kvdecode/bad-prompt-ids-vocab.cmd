kvdecode tests/ckpt/tiny-gpt2 --prompt-ids 1,99
