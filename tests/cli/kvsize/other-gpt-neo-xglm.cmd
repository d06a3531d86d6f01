kvsize tests/configs/gpt-neo-125m.json tests/configs/xglm-1.7b.json --ctx 8192,131072
