kvsize gemma-2-9b --per-layer -c 8192 -t bf16
