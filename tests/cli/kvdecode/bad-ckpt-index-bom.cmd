kvdecode tests/ckpt/bad-index-bom --new 2
