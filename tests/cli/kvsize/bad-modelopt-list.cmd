kvsize tests/bad/modelopt-list --ctx 8k
