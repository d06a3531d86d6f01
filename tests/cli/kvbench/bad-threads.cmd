kvbench --threads 0
