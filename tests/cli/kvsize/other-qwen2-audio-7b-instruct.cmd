kvsize tests/configs/qwen2-audio-7b-instruct.json --ctx 8192,131072 -t auto,fp8
