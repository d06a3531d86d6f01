kvbench --baseline x.tsv gpt2
