kvfit llama-3.1-70b --gpu h100 --tp 4 --engine all --ctx 8k | cut -f6
