kvfit llama-3.1-8b --gpu h100-sxm --kv-dtype fp8 --calibrate tests/results/aiperf-llama-3.1-8b-h100-fp8kv.json --engine llamacpp -ngl 20
