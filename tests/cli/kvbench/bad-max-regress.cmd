kvbench --max-regress 0.1
