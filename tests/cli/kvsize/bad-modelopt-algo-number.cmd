kvsize tests/bad/modelopt-algo-number --ctx 8k
