kvbench --baseline x.tsv --max-regress -1
