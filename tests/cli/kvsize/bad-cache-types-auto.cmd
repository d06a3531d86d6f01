kvsize llama-3.1-8b --cache-type-k auto --cache-type-v q4_0
