kvsize llama-3.1-8b tests/bad/array.json
