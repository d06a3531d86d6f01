kvdecode tests/ckpt/bad-qwen3-q-norm-missing --new 2
