kvsize tests/bad/thinker-text-config-string.json --ctx 8192
