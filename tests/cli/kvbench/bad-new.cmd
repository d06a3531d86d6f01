kvbench --new 0
