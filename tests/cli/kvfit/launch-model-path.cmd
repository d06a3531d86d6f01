kvfit tests/ckpt/tiny/config.json tests/ckpt/tiny --gpu h100-sxm --ctx 256 -o vllm
