kvsize tests/configs/zamba-7b.json --ctx 4096,8192 -t auto,fp8
