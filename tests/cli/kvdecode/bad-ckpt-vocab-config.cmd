kvdecode tests/ckpt/bad-vocab-config --prompt 'the kv cache' --new 2
