kvdecode tests/ckpt/bad-qwen3-q-norm-shape --new 2
