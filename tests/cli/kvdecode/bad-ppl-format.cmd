kvdecode tests/ckpt/tiny-gpt2 --ppl tests/tok/ppl.txt -t q8_0
