kvsize llama-3.1-8b --kv-dtype int4
