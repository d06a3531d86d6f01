kvdecode tests/cli/kvdecode/tiny-llama.json --k-dtype q8_0
