kvsize tests/configs/nemotron-nano-9b-v2.json --ctx 8192,131072 -t auto,fp8
