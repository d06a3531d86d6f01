kvsize llama-3.1-8b --ctx 8k --json | kvfit --gpu h100 -
