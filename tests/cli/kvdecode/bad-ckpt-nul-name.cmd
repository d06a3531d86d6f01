kvdecode tests/ckpt/bad-st-nul-name --new 2
