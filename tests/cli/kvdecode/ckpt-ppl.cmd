kvdecode tests/ckpt/tiny-gpt2 --ppl tests/tok/ppl.txt -t f16,fp8,int8 -j 1 -o tsv | cut -f1-7
