kvbench tests/ckpt/tiny-gpt2 --bench quality --kv-dtype fp8
