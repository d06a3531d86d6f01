kvdecode tests/ckpt/bad-st-bom --new 2
