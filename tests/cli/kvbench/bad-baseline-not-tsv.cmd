kvbench --baseline configs/gpt2.json
