kvfit llama-3.1-8b --gpu m2-24gb --ctx 4k
