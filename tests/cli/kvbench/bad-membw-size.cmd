kvbench --bench membw --membw-size 1K
