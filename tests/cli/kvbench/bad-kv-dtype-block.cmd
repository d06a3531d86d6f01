kvbench --bench attn --kv-dtype q4_0 --ctx 16 --layers 1 --vocab 256 tests/cli/kvdecode/tiny-llama.json
