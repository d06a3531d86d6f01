kvdecode tests/ckpt/tiny-gpt2 --layers 1
