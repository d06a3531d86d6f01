kvsize tests/gguf/tiny-00002-of-00003.gguf --ctx 4k --kv-dtype f16,q8_0
