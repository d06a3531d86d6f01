kvdecode tests/ckpt/tiny --ppl tests/tok/ppl.txt
