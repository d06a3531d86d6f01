kvdecode tests/ckpt/bad-tok-nul --prompt 'the cache' --new 2
