kvdecode tests/ckpt/bad-offsets --new 2
