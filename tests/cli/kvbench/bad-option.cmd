kvbench --frobnicate
