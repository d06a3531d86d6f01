kvsize tests/configs/llama-3.2-90b-vision-instruct.json --ctx 8192,131072 -t auto,fp8
