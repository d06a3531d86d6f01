kvdecode tests/ckpt/tiny-gpt2 -t f16,q8_0
