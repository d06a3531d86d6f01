kvfit gemma-2-9b --gpu a100-80gb --ctx 8k,32k
