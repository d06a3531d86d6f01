kvdecode tests/ckpt/bad-index-nul-shard --new 2
