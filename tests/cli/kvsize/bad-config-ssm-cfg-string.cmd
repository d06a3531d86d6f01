kvsize tests/bad/ssm-cfg-string.json --ctx 8192
