kvfit tests/quant/llama-3.1-8b-modelopt-fp8-kv.json --gpu h100-sxm --ctx 8k -e all
