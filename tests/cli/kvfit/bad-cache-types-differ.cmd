kvfit llama-3.1-8b --gpu h100-sxm --cache-type-k q8_0 --cache-type-v f16
