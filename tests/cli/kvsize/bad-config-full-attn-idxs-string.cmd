kvsize tests/bad/full-attn-idxs-string.json --ctx 8192
