kvsize tests/configs/lfm2.5-vl-1.6b.json --ctx 8192,131072 -t auto,fp8
