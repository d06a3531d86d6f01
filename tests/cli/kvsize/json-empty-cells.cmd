kvsize mistral-7b-v0.1 --per-layer --json -c 1 | head -3
