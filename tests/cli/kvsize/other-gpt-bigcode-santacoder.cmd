kvsize tests/configs/gpt-bigcode-santacoder.json --ctx 8192,131072 -t auto,fp8
