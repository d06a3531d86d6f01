kvbench tests/bad/array.json
