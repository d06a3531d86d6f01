kvdecode tests/cli/kvdecode/tiny-llama.json --prompt 5 --new 10 --temperature 0.8 --top-k 20 --seed 3 --threads 1 2>/dev/null | cut -f1,2,5,6
