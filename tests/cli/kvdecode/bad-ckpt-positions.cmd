kvdecode tests/ckpt/tiny-gpt2 --prompt 40 --new 2
