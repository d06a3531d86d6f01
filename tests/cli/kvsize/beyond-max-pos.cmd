kvsize tests/bad/small-max-pos.json -c 8k,16k
