kvfit --params deepseek-v3 gpt-oss-20b llama-3.1-8b tests/ckpt/tiny/config.json tests/bad/quant-awq.json
