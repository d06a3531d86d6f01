cat configs/llama-3.1-8b.json | kvsize - -c 8k
