kvsize tests/bad/ssm-cfg-number.json --ctx 8192
