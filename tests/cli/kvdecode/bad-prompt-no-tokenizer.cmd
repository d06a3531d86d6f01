kvdecode tests/ckpt/tiny --prompt "some text" --new 2
