kvsize tests/bad/head-dim-80.json -t q4_0 -c 1
