kvdecode tests/ckpt/bad-st-offset-exp --new 2
