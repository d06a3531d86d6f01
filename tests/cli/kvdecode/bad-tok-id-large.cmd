kvdecode tests/ckpt/bad-tok-id-large --prompt 'computing the cache' --new 2
