kvdecode tests/ckpt/bad-tok-bom --prompt 'the cache' --new 2
