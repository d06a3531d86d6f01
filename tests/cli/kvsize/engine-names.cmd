kvsize llama-3.1-8b --max-model-len 8k --kv-cache-dtype fp8 --tensor-parallel-size 4; kvsize llama-3.1-8b --ctx-size 4k --cache-type-k q8_0 --cache-type-v q8_0 --no-header
