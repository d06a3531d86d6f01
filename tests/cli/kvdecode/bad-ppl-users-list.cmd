kvdecode tests/ckpt/tiny-gpt2 --ppl tests/tok/ppl.txt --users 1,2
