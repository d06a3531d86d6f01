kvbench --help
