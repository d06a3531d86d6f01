kvfit llama-3.1-8b --gpu h200 --ctx 1k --max-num-seqs 64 --max-num-batched-tokens 4096
