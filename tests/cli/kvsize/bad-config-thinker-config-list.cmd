kvsize tests/bad/thinker-config-list.json --ctx 8192
