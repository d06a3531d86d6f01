kvbench --version
