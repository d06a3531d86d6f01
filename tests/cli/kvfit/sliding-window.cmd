kvfit gemma-2-9b gpt-oss-20b --gpu a100-80gb --ctx 8k --weights-dtype bf16 --engine all
