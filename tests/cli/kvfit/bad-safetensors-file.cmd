kvfit tests/ckpt/tiny/model.safetensors --gpu h100
