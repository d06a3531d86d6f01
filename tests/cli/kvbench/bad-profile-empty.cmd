kvbench --profile ''
