kvfit tests/bad/gguf-split-00003-of-00003.gguf --params
