kvbench --block-size 0
