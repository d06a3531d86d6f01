kvdecode tests/ckpt/bad-st-metadata-only --new 2
