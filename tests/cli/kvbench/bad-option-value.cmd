kvbench --bench
