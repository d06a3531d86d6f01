kvbench tests/ckpt/bad-vocab-config --bench quality --kv-dtype fp8
