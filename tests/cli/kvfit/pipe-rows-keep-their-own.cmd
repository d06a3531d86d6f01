kvsize qwen3-8b --kv-dtype bf16,q8_0 --ctx 4k,40k --users 1,2 | kvfit --gpu rtx-4090 --weights-dtype int4 --ctx 1k -
