kvdecode tests/ckpt/bad-st-shape-real --new 2
