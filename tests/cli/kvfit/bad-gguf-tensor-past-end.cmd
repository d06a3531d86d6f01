kvfit tests/bad/gguf-tensor-past-end.gguf --gpu h100
