kvfit llama-3.1-8b --gpu h100-sxm --cache-type-k fp8 --cache-type-v bf16
