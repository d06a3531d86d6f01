kvdecode tests/ckpt/bad-vocab-config --ppl tests/tok/ppl.txt
