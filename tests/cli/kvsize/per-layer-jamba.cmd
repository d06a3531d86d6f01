kvsize jamba-v0.1 --per-layer -c 300k
