kvsize tests/configs/qwen2.5-omni-7b.json --ctx 8192,32768 -t auto,fp8
