kvdecode tests/ckpt/bad-tok-empty --prompt 'a text and <|x|>' --new 2
