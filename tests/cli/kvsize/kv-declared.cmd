kvsize tests/quant/llama-3.1-8b-modelopt-fp8-kv.json tests/quant/llama-3.1-8b-modelopt-nvfp4-scheme.json tests/quant/llama-3.1-8b-modelopt-int8-kv.json --ctx 8k
