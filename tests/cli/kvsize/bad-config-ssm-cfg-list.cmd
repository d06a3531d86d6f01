kvsize tests/bad/ssm-cfg-list.json --ctx 8192
