kvfit llama-3.1-8b gemma-3-27b jamba-v0.1 gpt-oss-20b --gpu h200 --ctx 32k --engine all
