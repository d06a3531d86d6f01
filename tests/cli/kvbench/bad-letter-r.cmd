kvbench -r 3
