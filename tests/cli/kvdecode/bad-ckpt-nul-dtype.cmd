kvdecode tests/ckpt/bad-st-nul-dtype --new 2
