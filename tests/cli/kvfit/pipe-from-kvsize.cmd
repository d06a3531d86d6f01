kvsize llama-3.1-8b gemma-2-9b --kv-dtype fp8 --ctx 8k,32k 2>/dev/null | kvfit --gpu l40s -
