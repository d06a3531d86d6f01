kvsize tests/configs/deepseek-ocr.json --ctx 8192,131072 -t auto,fp8
