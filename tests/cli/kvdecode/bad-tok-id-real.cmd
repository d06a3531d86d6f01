kvdecode tests/ckpt/bad-tok-id-real --prompt 'the cache' --new 2
