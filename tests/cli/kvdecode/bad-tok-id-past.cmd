kvdecode tests/ckpt/bad-tok-id-past --ppl tests/tok/ppl.txt
