kvdecode tests/ckpt/tiny-gpt2 --ppl tests/tok/ppl.txt -t f16,fp8,int8 -j 1 -o tsv | awk -F'\t' '{ if (NR == 1) print $1 "\t" $2 "\t" $4 "\t" $5; else printf "%s\t%s\t%.0f\t%s\n", $1, $2, $4, $5 }'
