kvbench --baseline tests/bad/no-such.tsv
