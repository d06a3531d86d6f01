kvbench --mla 0
