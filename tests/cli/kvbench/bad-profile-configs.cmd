kvbench --profile /tmp/kvbench-bad-profile.json --layers 1 gpt2 llama-3.1-8b
